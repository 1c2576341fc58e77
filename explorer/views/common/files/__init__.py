"""Files in and out of a page: uploads (:mod:`~explorer.views.common.files.uploads`,
:mod:`~explorer.views.common.files.file_input`) and exports (:mod:`~explorer.views.common.files.exports`).
"""
