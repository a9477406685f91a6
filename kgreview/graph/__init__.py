"""The graph: concepts, relation types, sources, edges; their services and selectors."""
