"""Journeys: the users' paths end to end through the installed console script (issue 27)."""
