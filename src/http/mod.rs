//! The HTTP front: the listener, routing, and the health endpoints (http-mcp.md §2–§4).
