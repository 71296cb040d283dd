"""The version of dptoolkit (one place: the package and the model files read it here)."""
__version__ = "0.1.0.dev0"
