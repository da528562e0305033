"""Calibrating judges against labels: agreement and Cohen's kappa of a rubric judge with human
verdicts, and of a reviewer with human ratings (``papergym judge calibrate``)."""
