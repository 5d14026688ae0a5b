"""Tenant isolation matrix over every route and MCP tool."""
