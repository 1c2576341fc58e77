"""Files in and out of a page: uploads (:mod:`.uploads`, :mod:`.file_input`) and exports (:mod:`.exports`)."""
