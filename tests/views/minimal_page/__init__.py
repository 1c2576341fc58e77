"""A page of the test folder, the smallest the app takes: a folder of the same shape as a paper's page (state, tab,
errors, glossary, presets, page) that tests/views/test_a_page_is_a_folder.py adds to the registry with one line."""
