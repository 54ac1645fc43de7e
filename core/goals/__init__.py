"""Goals: the goal machine, the decisions on goals, the one door every action goes through."""
