"""Webhooks in the catalog: endpoints, the outbox of deliveries and attempts, the event writers."""
