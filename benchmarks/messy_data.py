"""Messy frames for benchmarks/data_questions.py: the data as people's notebooks really hold it.

`make_messy_frames()` builds, from a fixed seed, three frames of an electronics shop (Jan-Jun 2024):

* `orders` (346 rows: 330 orders, 16 of them twice -- a re-imported export appended at the end): order_id (int),
  order_date (text: '2024-03-05', '03/07/2024' or 'March 9, 2024', a few blank), client_id (int), region
  ('North', 'north ', ' NORTH', ...), product, quantity, amount (text: '$1,234.50', a few without '$'; missing as
  None, NaN and '').
* `clients` (160 rows): client_id (text, zero-padded: '017'), name, segment ('Business', ' business', 'ENTERPRISE ';
  missing as None, NaN and ''), signup_date (text in the same mixed formats, a few blank).
* `refunds` (150 rows: 144 refunds, 6 of them twice, next to each other): refund_id, order_id (text: '5017'), refund_date (mixed
  formats, a few blank), amount (text: '-$18.46', '-$1,020.00'), reason (inconsistent labels; missing as None, NaN
  and '').

Slash dates are always month/day/year, so pandas' `format="mixed"` reads every date unambiguously. The columns
holding None keep the object dtype (pandas would otherwise turn None into NaN).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

REGIONS = ["North", "South", "East", "West"]
PRODUCTS = {"Laptop": 950.0, "Monitor": 240.0, "Keyboard": 45.0, "Mouse": 25.0, "Headset": 80.0}
SEGMENTS = ["Consumer", "Business", "Enterprise"]
REASONS = ["Damaged", "Wrong item", "Late delivery", "Changed mind"]
FIRST = ["Ada", "Bo", "Cy", "Dee", "Eli", "Fay", "Gus", "Hal", "Ivy", "Jo", "Kai", "Lu", "Max", "Nia", "Oz", "Pia"]
LAST = ["Stone", "Marsh", "Reyes", "Okafor", "Berg", "Chen", "Diaz", "Evans", "Fox", "Gold"]

ORDERS, DUPLICATE_ORDERS, CLIENTS, REFUNDS, DUPLICATE_REFUNDS = 330, 16, 160, 144, 6


def _date_text(day: pd.Timestamp, draw: float) -> str:
    """A date as one of the people who typed the data wrote it: ISO, month/day/year, or 'March 9, 2024'."""
    if draw < 0.5:
        return day.strftime("%Y-%m-%d")
    if draw < 0.8:
        return day.strftime("%m/%d/%Y")
    return f"{day:%B} {day.day}, {day.year}"


def _label_text(label: str, draw: float) -> str:
    """A label as typed: mostly as it should be, else lower or upper case, with a stray space before or after."""
    label = str(label)  # not numpy's str_, which an object column would show
    variants = [label.lower(), label.upper(), f"{label} ", f" {label}", f"{label.lower()} ", f" {label.upper()}"]
    return label if draw < 0.6 else variants[int((draw - 0.6) / 0.4 * len(variants))]


def _money_text(value: float, draw: float) -> str:
    """'$1,234.50' (and '-$18.46' for a negative amount); one in twenty typed without the '$' and commas."""
    if draw < 0.05:
        return f"{value:.2f}"
    return f"-${-value:,.2f}" if value < 0 else f"${value:,.2f}"


def _blank_out(values: list[Any], rng: np.random.Generator, counts: tuple[int, int, int]) -> list[Any]:
    """Put None, NaN and '' (counts of each) at distinct random places: the three ways a value goes missing."""
    places = rng.choice(len(values), sum(counts), replace=False)
    markers = [None] * counts[0] + [np.nan] * counts[1] + [""] * counts[2]
    values = list(values)
    for place, marker in zip(places, markers):
        values[place] = marker
    return values


def make_messy_frames(seed: int = 11) -> dict[str, pd.DataFrame]:
    """`orders`, `clients` and `refunds` with money and dates as text, untidy labels, gaps, duplicates, mixed keys."""
    rng = np.random.default_rng(seed)

    days = pd.date_range("2024-01-01", "2024-06-30", freq="D")
    order_days = pd.to_datetime(np.sort(rng.choice(days.values, ORDERS)))
    products = rng.choice(list(PRODUCTS), ORDERS, p=[0.15, 0.2, 0.25, 0.25, 0.15])
    quantities = rng.integers(1, 9, ORDERS)
    amounts = np.round(quantities * np.array([PRODUCTS[p] for p in products]) * rng.uniform(0.85, 1.1, ORDERS), 2)
    order_ids = np.arange(5001, 5001 + ORDERS)
    order_dates = _blank_out([_date_text(d, r) for d, r in zip(order_days, rng.random(ORDERS))], rng, (2, 0, 3))
    regions = rng.choice(REGIONS, ORDERS, p=[0.3, 0.2, 0.25, 0.25])
    amount_text = _blank_out([_money_text(a, r) for a, r in zip(amounts, rng.random(ORDERS))], rng, (5, 4, 4))
    orders = pd.DataFrame(
        {
            "order_id": order_ids,
            "order_date": pd.Series(order_dates, dtype=object),
            "client_id": rng.integers(1, CLIENTS + 1, ORDERS),
            "region": [_label_text(r, d) for r, d in zip(regions, rng.random(ORDERS))],
            "product": products,
            "quantity": quantities,
            "amount": pd.Series(amount_text, dtype=object),
        }
    )
    again = np.sort(rng.choice(ORDERS, DUPLICATE_ORDERS, replace=False))
    orders = pd.concat([orders, orders.iloc[rng.permutation(again)]], ignore_index=True)

    signup_days = pd.to_datetime("2022-01-01") + pd.to_timedelta(rng.integers(0, 912, CLIENTS), unit="D")
    segments = rng.choice(SEGMENTS, CLIENTS, p=[0.5, 0.3, 0.2])
    clients = pd.DataFrame(
        {
            "client_id": [f"{i:03d}" for i in range(1, CLIENTS + 1)],
            "name": [f"{FIRST[i % len(FIRST)]} {LAST[i // len(FIRST)]}" for i in range(CLIENTS)],
            "segment": pd.Series(
                _blank_out([_label_text(s, d) for s, d in zip(segments, rng.random(CLIENTS))], rng, (4, 3, 3)),
                dtype=object,
            ),
            "signup_date": pd.Series(
                _blank_out([_date_text(d, r) for d, r in zip(signup_days, rng.random(CLIENTS))], rng, (2, 0, 2)),
                dtype=object,
            ),
        }
    )

    has_amount = np.flatnonzero(pd.notna(pd.Series(amount_text, dtype=object).replace("", np.nan)))
    refunded = np.sort(rng.choice(has_amount, REFUNDS, replace=False))
    shares = rng.choice([1.0, 0.5, 0.25, 0.1], REFUNDS, p=[0.4, 0.3, 0.2, 0.1])
    refund_days = order_days[refunded] + pd.to_timedelta(rng.integers(2, 21, REFUNDS), unit="D")
    reasons = rng.choice(REASONS, REFUNDS, p=[0.35, 0.25, 0.25, 0.15])
    refunds = pd.DataFrame(
        {
            "refund_id": [f"R{i:04d}" for i in range(1, REFUNDS + 1)],
            "order_id": [str(order_ids[i]) for i in refunded],
            "refund_date": pd.Series(
                _blank_out([_date_text(d, r) for d, r in zip(refund_days, rng.random(REFUNDS))], rng, (1, 0, 2)),
                dtype=object,
            ),
            "amount": [_money_text(-round(amounts[i] * s, 2), 1.0) for i, s in zip(refunded, shares)],
            "reason": pd.Series(
                _blank_out([_label_text(r, d) for r, d in zip(reasons, rng.random(REFUNDS))], rng, (3, 3, 3)),
                dtype=object,
            ),
        }
    )
    again = np.sort(rng.choice(REFUNDS, DUPLICATE_REFUNDS, replace=False))
    refunds = pd.concat([refunds, refunds.iloc[again]]).sort_index(kind="stable").reset_index(drop=True)
    return {"orders": orders, "clients": clients, "refunds": refunds}
