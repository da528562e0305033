"""The rubric reward: judges, scoring rules, and adapters for TRL, verl and OpenRLHF."""
