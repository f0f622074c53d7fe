"""RupeeBias Explorer: the Streamlit app's building blocks.

``data`` is the only module that talks to DuckDB; ``tables`` reshapes query results with pandas;
``charts`` builds Altair specs; ``state`` keeps widget values and the URL in sync; ``ui`` holds
the widgets every page shares (source badges, downloads, data-problem messages); ``numbers``
writes every number shown as text; ``heap`` keeps the server's full garbage collections short.
"""
