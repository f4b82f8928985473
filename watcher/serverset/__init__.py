"""The server set as a thing with a history: who owns each server name (by record), and every change of the set
(a server appeared, was retired, was redefined), recorded in the state once and shown on the page."""
