"""What the REST routes and the MCP tools share: each operation once, below both.

Routes translate HTTP and tools translate MCP; both call these, so they check the same plan
limits and sources and answer the same documents. No route imports another route, and the
tools import no route. Reads of published runs live further down, in ``storage.artifacts.served``.
"""
