"""The LLM layer: one async protocol over OpenAI-compatible servers and local models."""
