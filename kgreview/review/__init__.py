"""The proposal queue, decisions and the reviewer workspace."""
