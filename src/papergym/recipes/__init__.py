"""The build: papers → stages → instances with a question, a reference answer and a rubric."""
