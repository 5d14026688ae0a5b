"""The HTTP face of the service: app factory, routes per resource, auth and problem+json."""
