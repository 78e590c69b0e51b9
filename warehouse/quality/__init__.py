"""What a snapshot must hold before it is published, and how a published one is doing:
the validation runner, the core suites, health over the run journal."""
