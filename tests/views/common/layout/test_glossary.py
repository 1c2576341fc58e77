"""The glossary: the words of every page in plain words first, the papers' symbols second, in the app's header
(one header for every page) and its modal."""
import pytest

pn = pytest.importorskip("panel")

from explorer.views.common.layout.glossary import WORDS, Glossary, glossary_markdown  # noqa: E402
from explorer.views.pages import GLOSSARY, PAGES  # noqa: E402


def test_the_glossary_explains_the_words_the_issue_names():
    terms = " ".join(entry.term for entry in GLOSSARY)
    text = glossary_markdown(GLOSSARY)
    for word in ("Bootstrap sample", "S/N", "Replica theory", "ADATAP", "Monte-Carlo",
                 # issue 52: the words a reader met before any page defined them
                 "Occupation numbers", "VG", "MF", "ASC", "noise floor", "ε(S)", "Seed"):
        assert word in terms
    # the papers are cited by key, and the glossary says which paper each key is
    assert "seed 00" not in text and all(key in text for key in ("[MO03]", "[MO03b]", "[Fis16]", "[LSWV05]"))
    assert all(f"**{entry.term}**: {entry.meaning}" in text for entry in GLOSSARY)
    assert len({entry.term for entry in GLOSSARY}) == len(GLOSSARY)


def test_the_button_opens_the_templates_modal():
    opened = []

    class Template(pn.template.FastListTemplate):
        def open_modal(self) -> None:
            opened.append(True)

    glossary = Glossary(GLOSSARY)
    template = Template(title="t", modal=[glossary], header=[glossary.button])
    glossary.attach(template)
    glossary.button.clicks += 1
    assert opened == [True]


def test_every_page_of_the_app_has_the_glossary_in_its_header():
    from explorer.app import create_app

    app = create_app(tab="steps")
    try:
        (button,) = [item for item in app.header.objects if "explorer-glossary-button" in item.css_classes]
        (shown,) = [item for item in app.modal.objects if "explorer-glossary" in item.css_classes]
        assert button.label == "Glossary" and shown.object == glossary_markdown(GLOSSARY)
    finally:
        for view in app.pages.values():
            for state in view.states.values():
                state.close()


def test_the_app_s_glossary_is_the_shared_words_then_each_page_s_own_in_the_registry_s_order():
    assert GLOSSARY == (*WORDS, *(entry for page in PAGES for entry in page.glossary))
    owners = {entry.term: page.key for page in PAGES for entry in page.glossary}
    assert owners["Hard-margin SVM"] == "svm" and owners["ASC (approximation set coding)"] == "selection"
    assert owners["Fast bootstrap"] == "fastboot" and owners["VG (variational Gaussian)"] == "gp"
