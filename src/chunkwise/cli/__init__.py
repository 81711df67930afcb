"""Command-line interface: parse, call the library, print. Nothing else lives here."""
