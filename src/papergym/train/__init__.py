"""Training and model-building helpers: tiny in-process models for tests and CPU demos."""
