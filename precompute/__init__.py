"""Offline pipeline: prompts → collect → metrics, each a `python -m precompute` subcommand."""
