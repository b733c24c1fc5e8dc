"""One run: the session, settings, the call scheduler, cost budget, response cache, records."""
