"""Load generators shared by tests and benchmarks (see :mod:`papergym.testing.reward_load`).

The fake OpenAI-compatible server that used to live here is :mod:`papergym.fakellm`, shipped as
the ``papergym fake-llm`` command.
"""
