"""Class rooms (issue 48): the lecturer's projector view (:mod:`~explorer.views.classroom.lecturer`), the students'
phone page (:mod:`~explorer.views.classroom.student`), their figures (:mod:`~explorer.views.classroom.figures`), the
step-by-step problem a room draws (:mod:`~explorer.views.classroom.room_problem`) and how a room is entered
(:mod:`~explorer.views.classroom.entry`). The rooms themselves are :mod:`explorer.runtime.rooms`."""
