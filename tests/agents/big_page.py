"""A generated marketplace page of about 5 MB: a search form, thousands of listings, a
cookie dialog with a vendor table of hundreds of rows, and a footer (ids as Mind2Web's
``backend_node_id``). Deterministic."""

from __future__ import annotations

import random

CATEGORIES = ["Bikes", "Sofas", "Phones", "Cameras", "Guitars", "Lamps", "Tents", "Desks"]
CITIES = ["Leeds", "Bristol", "Cork", "Graz", "Lyon", "Turin", "Porto", "Ghent"]


def big_page(listings: int = 3200, vendors: int = 600, seed: int = 7) -> str:
    rng = random.Random(seed)
    next_id = iter(range(1, 10**7))

    def nid() -> str:
        return f'backend_node_id="{next(next_id)}"'

    out = [f"<html {nid()}><head><title>Classifieds</title></head><body {nid()}>"]
    out.append(
        f'<header {nid()}><form {nid()} action="/search"><label {nid()}>What are you looking for'
        f'</label><input {nid()} type="text" name="q" placeholder="Search classifieds">'
        f'<select {nid()} name="city">'
        + "".join(f"<option {nid()}>{c}</option>" for c in CITIES)
        + f'</select><button {nid()} type="submit">Search</button></form></header>'
    )
    out.append(f'<main {nid()}><div {nid()} class="results">')
    for n in range(listings):
        cat, city = rng.choice(CATEGORIES), rng.choice(CITIES)
        price = rng.randint(5, 2000)
        words = " ".join(
            rng.choice(["good", "used", "new", "rare", "boxed", "mint"]) for _ in range(200)
        )
        out.append(
            f'<section {nid()} class="cat-{n // 200}"><article {nid()} class="listing">'
            f'<div {nid()}><h3 {nid()}><a {nid()} href="/item/{n}">'
            f"{cat} number {n} in {city}</a></h3>"
            f"<p {nid()}>Price {price} EUR. Condition: {words}. Seller rating {rng.randint(1, 5)} "
            f"stars, posted {rng.randint(1, 30)} days ago, pickup in {city} or delivery.</p>"
            f'<div {nid()}><button {nid()} type="button">Save {cat} {n}</button>'
            f'<a {nid()} href="/contact/{n}">Contact seller of item {n}</a></div></div>'
            f"</article></section>"
        )
    out.append("</div></main>")
    out.append(
        f'<div {nid()} id="cookie-dialog" style="display:none"><h2 {nid()}>Your privacy</h2>'
        f"<button {nid()}>Accept all</button><table {nid()}>"
    )
    for v in range(vendors):
        out.append(
            f"<tr {nid()}><td {nid()}>Vendor {v} advertising partner ltd</td>"
            f'<td {nid()}><input {nid()} type="checkbox" name="v{v}"> consent</td></tr>'
        )
    out.append("</table></div>")
    out.append(
        f'<footer {nid()}><a {nid()} href="/help">Help centre</a>'
        f'<a {nid()} href="/terms">Terms</a></footer></body></html>'
    )
    return "".join(out)
