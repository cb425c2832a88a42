"""What the apps (``librarian demo``, ``librarian ui``) share: the demo conversation and
the progress line."""
