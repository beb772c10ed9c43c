"""Fake HTTP servers for fault tests: real sockets on 127.0.0.1, scripted misbehaviour."""
