# syntax=docker/dockerfile:1
# One image for every Tiebreak process: `tiebreak web` (the default command) and
# `tiebreak worker`, built from the locked dependencies (uv.lock), run as a non-root user.
#
#   docker build -t tiebreak .
#   docker run --env-file .env -e REDIS_URL=redis://redis:6379/0 -p 8000:8000 tiebreak
#   docker run --env-file .env -e REDIS_URL=redis://redis:6379/0 tiebreak worker
#
# compose.yaml runs both with a Redis.

FROM python:3.11-slim-bookworm AS builder
COPY --from=ghcr.io/astral-sh/uv:0.13.9 /uv /usr/local/bin/uv
ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PYTHON=/usr/local/bin/python3.11 \
    UV_PROJECT_ENVIRONMENT=/opt/tiebreak
WORKDIR /src
# The dependencies first, in a layer of their own: it is rebuilt only when the lock changes.
RUN --mount=type=cache,target=/root/.cache/uv \
    --mount=type=bind,source=uv.lock,target=uv.lock \
    --mount=type=bind,source=pyproject.toml,target=pyproject.toml \
    uv sync --frozen --no-dev --no-editable --no-install-project
COPY pyproject.toml uv.lock README.md app.yml ./
COPY app ./app
COPY agents ./agents
COPY policies ./policies
# Then Tiebreak itself, as a wheel inside the environment: the runtime needs no source tree.
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-editable

FROM python:3.11-slim-bookworm
RUN groupadd --system --gid 10001 tiebreak \
    && useradd --system --uid 10001 --gid tiebreak --home-dir /var/lib/tiebreak \
        --create-home --shell /usr/sbin/nologin tiebreak
# Same path as in the builder: the environment's scripts name its Python by that path.
COPY --from=builder /opt/tiebreak /opt/tiebreak
ENV PATH=/opt/tiebreak/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    TIEBREAK_DATA_DIR=/var/lib/tiebreak
USER tiebreak
WORKDIR /var/lib/tiebreak
EXPOSE 8000
# `tiebreak web` answers /healthz; a worker serves no HTTP (compose.yaml turns this off for it).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
ENTRYPOINT ["tiebreak"]
CMD ["web", "--host", "0.0.0.0", "--port", "8000"]
