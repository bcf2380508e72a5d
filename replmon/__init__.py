"""replmon: a terminal monitor for one replicated primary/replica database pair."""

__version__ = "0.1.0"
