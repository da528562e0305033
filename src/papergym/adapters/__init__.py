"""Trainer adapters over any :class:`~papergym.reward_protocol.Reward`: TRL, verl, OpenRLHF."""
