"""Built-in providers, one small module each. Endpoints may be overridden in the settings entry."""
