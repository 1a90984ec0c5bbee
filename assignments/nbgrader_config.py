# nbgrader configuration of the amp course directory. `make assignments` copies this file and
# source/ into the course directory (_build/assignments by default) and runs
# `nbgrader generate_assignment` there; nbgrader reads this file from its working directory.
# Everything is offline: no exchange, no formgrader needed (the commands of README.md,
# "Graded problem sets").
c = get_config()  # noqa: F821 (defined by traitlets when nbgrader loads the file)

c.CourseDirectory.course_id = "amp-shuffling"
# The released notebooks: an answer cell becomes this stub, a written answer the text stub.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
# Each problem set runs in seconds (tiny n); a cell that runs over 120 s is an error.
c.Execute.timeout = 120
c.Execute.startup_timeout = 120
