# cmake -DIN=file -DOUT=file.cpp -DSYMBOL=name -DTEMPLATE=embedded_text.cpp.in -P embed_file_script.cmake:
# the build-time twin of mrplan_embed_text, for files the build itself writes.
file(READ ${IN} MRPLAN_EMBED_TEXT)
set(MRPLAN_EMBED_SYMBOL ${SYMBOL})
get_filename_component(MRPLAN_EMBED_FILE ${IN} NAME)
configure_file(${TEMPLATE} ${OUT} @ONLY)
