"""The run boundary: the only package that starts processes. Rooms (bubblewrap) for outside code, child
processes with scrubbed environments and their own process groups, the relay into a room's network, the
reaper that ends whatever a step left behind."""
