"""readagent-web: ReadAgent (gist memory + look-up) for web pages."""

__version__ = "0.1.0"
