"""RupeeBias core: the benchmark definition, prompt generation, response parsing and metrics.

A pure library: no network access and no Streamlit imports (a test enforces both).
"""
