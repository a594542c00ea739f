# Writes a program's shell completion scripts from the program itself (`PROGRAM completion
# bash|zsh|fish`), where bash-completion, zsh and fish look for them once installed:
#   cmake -DPROGRAM=path/to/ibcollect -DOUT=DIR -P completions.cmake
#   -> DIR/bash/ibcollect, DIR/zsh/_ibcollect, DIR/fish/ibcollect.fish
get_filename_component(name "${PROGRAM}" NAME)
set(files bash/${name} zsh/_${name} fish/${name}.fish)
foreach(shell bash zsh fish)
  list(POP_FRONT files file)
  get_filename_component(dir "${OUT}/${file}" DIRECTORY)
  file(MAKE_DIRECTORY "${dir}")
  execute_process(COMMAND "${PROGRAM}" completion ${shell} OUTPUT_FILE "${OUT}/${file}.tmp"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    file(REMOVE "${OUT}/${file}.tmp")
    message(FATAL_ERROR "${name} completion ${shell} exited ${rc}")
  endif()
  file(RENAME "${OUT}/${file}.tmp" "${OUT}/${file}")
endforeach()
