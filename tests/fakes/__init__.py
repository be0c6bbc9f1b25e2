"""Stand-ins for external services, reached through their real clients."""
