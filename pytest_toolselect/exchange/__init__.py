"""What the plugin and a model exchange: the tools offered, the turn, its reply."""
