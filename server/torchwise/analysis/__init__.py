"""Static analysis of one module: names and scopes, then facts about values."""
