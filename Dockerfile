# RupeeBias Explorer — the Streamlit app with the shipped data/ directory.
#   docker build -t rupeebias-explorer .
#   docker run -p 8501:8501 rupeebias-explorer
# The image is a public deployment by default: Try a prompt runs in public mode, never offers
# a typed endpoint, and with no secrets mounted offers no endpoint at all. To offer models,
# mount a secrets file (never bake it in) and pass the API keys it names as environment
# variables, e.g.
#   docker run -p 8501:8501 \
#     -v "$PWD/.streamlit/secrets.toml:/app/.streamlit/secrets.toml:ro" \
#     -e OPENROUTER_API_KEY=... rupeebias-explorer
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    RUPEEBIAS_DATA_DIR=/app/data \
    RUPEEBIAS_DUCKDB_MEMORY=1GB \
    RUPEEBIAS_PUBLIC_MODE=1 \
    RUPEEBIAS_LIVE_LOCAL_MODEL=0 \
    STREAMLIT_BROWSER_GATHER_USAGE_STATS=false

# curl: the health check below (slim images do not ship it).
RUN apt-get update \
    && apt-get install -y --no-install-recommends curl \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# Exact versions: the same constraints CI tests with (scripts/test.sh).
COPY requirements.txt constraints.txt ./
RUN pip install -c constraints.txt -r requirements.txt

# Application code (the library, the pipeline's client used by Try a prompt, the app itself),
# the methodology text the Methodology page renders, the Streamlit settings, and the data.
COPY rupeebias_core/ rupeebias_core/
COPY precompute/ precompute/
COPY explorer/ explorer/
COPY pages/ pages/
COPY app.py serve.py ./
COPY docs/methodology.md docs/methodology.md
COPY .streamlit/config.toml .streamlit/config.toml
COPY data/ data/

RUN useradd --create-home --uid 10001 rupeebias
USER rupeebias

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=40s --retries=3 \
    CMD curl --fail --silent http://localhost:8501/_stcore/health || exit 1
CMD ["streamlit", "run", "serve.py", "--server.address=0.0.0.0", "--server.port=8501", \
     "--server.headless=true"]
