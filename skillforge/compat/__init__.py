"""Compatibility layers: the APIs of other behaviour caches, running on skillforge."""
