"""The wire: typed models, errors, recipient rules and the HTTP clients."""
