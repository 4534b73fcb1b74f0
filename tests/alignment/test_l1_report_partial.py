"""The report's L1 partial: soft-404s, walls, shells and rendered passes by engine, from the
existence_rate breakdown."""

from __future__ import annotations

from citeaudit.report.render import _env


def test_partial_lists_soft_404s_and_walls_by_engine():
    l1 = {"categories": ["pass", "pass_rendered", "dead", "dead_soft_404",
                         "unresolved_paywall", "unresolved_script_shell"],
          "rows": [{"label": "all engines", "counts": [5, 4, 1, 2, 1, 3], "total": 16},
                   {"label": "<b>engine</b>", "counts": [5, 4, 1, 2, 1, 3], "total": 16}]}
    html = _env().get_template("_l1.html.j2").render(l1=l1)
    assert "Soft-404s, walls, script shells and browser captures by engine" in html
    assert ("<th>pass_rendered</th><th>dead_soft_404</th><th>unresolved_paywall</th>"
            "<th>unresolved_script_shell</th>") in html
    assert ("<td class=\"num\">4</td><td class=\"num\">2</td><td class=\"num\">1</td>"
            "<td class=\"num\">3</td>") in html
    assert "&lt;b&gt;engine&lt;/b&gt;" in html  # engine names are data: escaped
    none = _env().get_template("_l1.html.j2").render(
        l1={"categories": ["pass"], "rows": [{"label": "x", "counts": [3], "total": 3}]})
    assert "No cited page was a soft-404, a wall, a script shell or a browser capture." in none
    assert "None" not in none
