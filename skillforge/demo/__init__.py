"""The demo: a small support desk on SQLite, a stream of tickets, and a stand-in model."""
