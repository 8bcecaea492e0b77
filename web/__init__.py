"""gofish_web: watch, replay and play Go Fish in a web browser (``gofish-web``,
``gofish-replay``).

``gofish-web`` starts here, so that run without the web extra it says which to install."""

WEB_LIBRARIES = ("fastapi", "uvicorn", "starlette", "pydantic")


def web_cli() -> None:
    """``gofish-web``."""
    from gofish_env.cli import launch  # on use: importing the package stays light

    install = "pip install 'gofish-env[web]'"
    launch("gofish_web.server", "gofish-web", "web", WEB_LIBRARIES, install)
