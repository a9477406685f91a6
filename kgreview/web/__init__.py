"""The top layer: pages that combine apps (a source with the proposals quoting it, a
concept with its open proposals, the ontology with the relations agents met but the
vocabulary lacks, the curation log). Every other app sits below it and never imports it."""
