"""Pieces shared by every kgreview app: the no-delete guard and the domain error tree."""
