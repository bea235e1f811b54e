DROP INDEX belief_words_idx;
