"""Layer 0, data: helpers for data as people's notebooks hold it, for people and for agent code alike.

Modules:
    cleaning     to_number, to_dates, clean_labels, is_missing: money, dates, labels and gaps read from messy text
"""

from .cleaning import clean_labels, is_missing, to_dates, to_number

__all__ = ["clean_labels", "is_missing", "to_dates", "to_number"]
