package entity_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/credohq/credo/entity"
)

func TestKey(t *testing.T) {
	t.Parallel()
	for subject, want := range map[string]string{
		"user": "user", "User": "user", " the user ": "user", "I": "user", "me": "user", "Myself": "user", "": "user",
		"user's sister": "sister", "User\u2019s Sister": "sister", "my sister": "sister", "the user's  sister.": "sister",
		"users' parents": "parents", "user's the boss": "boss", "\"Sarah\"": "sarah", "Sarah Connor": "sarah connor",
		"the Acme Corp": "acme corp", "sister's husband": "sister's husband", "user's sister's husband": "sister's husband",
		"my": "user", "user's": "user's", "Dr. Who": "dr. who",
	} {
		require.Equal(t, want, entity.Key(subject), "Key(%q)", subject)
	}
	require.Equal(t, "Sister", entity.Name("User's Sister"), "Name keeps the case")
	require.Equal(t, "Sarah Connor", entity.Name(" the  Sarah Connor "))
	require.Equal(t, entity.User, entity.Name("Me"))
}

func TestKindOf(t *testing.T) {
	t.Parallel()
	require.Equal(t, entity.KindUser, entity.KindOf("user"))
	require.Equal(t, entity.KindPerson, entity.KindOf("sister"))
	require.Equal(t, entity.KindPerson, entity.KindOf("older sister"))
	require.Equal(t, entity.KindOther, entity.KindOf("acme"))
	require.True(t, entity.ValidKind(entity.KindPlace))
	require.False(t, entity.ValidKind(entity.KindUser), "only the user entity is the user")
}

func TestCheckName(t *testing.T) {
	t.Parallel()
	require.Empty(t, entity.CheckName("Sarah"))
	for name, why := range map[string]string{
		"": "empty", "  ": "empty", "\"\"": "empty", strings.Repeat("x", 201): "longer", "a\x00b": "NUL",
		"a\x07b": "control", "\xff": "UTF-8",
	} {
		require.Contains(t, entity.CheckName(name), why, "%q", name)
	}
}

func TestNearest(t *testing.T) {
	t.Parallel()
	names := []string{"Sarah", "sister", "Marc", "Acme"}
	require.Equal(t, "Sarah", entity.Nearest("Sarahh", names))
	require.Equal(t, "sister", entity.Nearest("the sistr", names))
	require.Empty(t, entity.Nearest("Bartholomew", names), "nothing near enough")
	require.Empty(t, entity.Nearest("Sarah", nil))
}

func TestProposals(t *testing.T) {
	t.Parallel()
	known := []entity.Known{
		{Key: "user", Name: "user", Kind: entity.KindUser},
		{Key: "mom", Name: "mom", Kind: entity.KindPerson},
		{Key: "mother", Name: "mother", Kind: entity.KindPerson},
		{Key: "sarah", Name: "Sarah", Kind: entity.KindOther},
		{Key: "sarah connor", Name: "Sarah Connor", Kind: entity.KindPerson},
		{Key: "mr. holmes", Name: "Mr. Holmes", Kind: entity.KindPerson},
		{Key: "sherlock holmes", Name: "Sherlock Holmes", Kind: entity.KindPerson},
		{Key: "acme", Name: "Acme", Kind: entity.KindOrganisation},
		{Key: "acme labs", Name: "Acme Labs", Kind: entity.KindPlace},
		{Key: "sister", Name: "sister", Kind: entity.KindPerson},
		{Key: "older sister", Name: "older sister", Kind: entity.KindPerson},
	}
	var got []string
	for _, p := range entity.Proposals(known) {
		got = append(got, p.Other+" -> "+p.Into)
	}
	require.ElementsMatch(t, []string{"mother -> mom", "sarah -> sarah connor", "mr. holmes -> sherlock holmes"}, got,
		"kinds that differ, relations and the user are never proposed")
}

// A subject resolves without a model call: the user's own possessive goes, and every
// name of the user is the user.
func ExampleKey() {
	for _, s := range []string{"I", "the user's Sister", "my sister", "Sarah Connor"} {
		fmt.Printf("%q -> %q\n", s, entity.Key(s))
	}
	// Output:
	// "I" -> "user"
	// "the user's Sister" -> "sister"
	// "my sister" -> "sister"
	// "Sarah Connor" -> "sarah connor"
}

func TestRelations(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"sister"}, entity.Relations("My sister just moved to Denver"))
	require.Equal(t, []string{"friend", "landlord"}, entity.Relations("my friend Marcus and our landlord, and my friend again"))
	require.Equal(t, []string{"ex-husband"}, entity.Relations("Forget everything about my ex-husband."))
	require.Empty(t, entity.Relations("I moved to Denver; a sister city of Lisbon"))
}
