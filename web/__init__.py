"""gofish_web: watch, replay and play Go Fish in a web browser (``gofish-web``,
``gofish-replay``)."""
